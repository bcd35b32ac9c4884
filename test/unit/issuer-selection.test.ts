// Which issuer a presented JWT belongs to (src/domain/issuers.ts): by its iss, then the issuer
// naming its key id, else the one answering for any key id of that iss; never one of another iss.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { overlapping, selectIssuer } from '../../src/domain/issuers.js';

const MUX = { name: 'mux', issuer: null, keyIds: ['muxKey1', 'muxKey2'] };
const CF = { name: 'cloudflare', issuer: null, keyIds: ['cfKey'] };
const IDP = { name: 'idp', issuer: 'https://idp.example.com/', keyIds: [] };
const LIVEKIT = { name: 'livekit', issuer: 'APIkey123', keyIds: [] };
const ALL = [MUX, CF, IDP, LIVEKIT];

describe('issuer selection', () => {
  it('selects by iss and key id, the any-key issuer of an iss for every key id', () => {
    assert.equal(selectIssuer(ALL, { iss: null, kid: 'muxKey2' })?.name, 'mux');
    assert.equal(selectIssuer(ALL, { iss: null, kid: 'cfKey' })?.name, 'cloudflare');
    assert.equal(selectIssuer(ALL, { iss: 'https://idp.example.com/', kid: 'rotated-7' })?.name, 'idp');
    assert.equal(selectIssuer(ALL, { iss: 'https://idp.example.com/', kid: null })?.name, 'idp');
    assert.equal(selectIssuer(ALL, { iss: 'APIkey123', kid: null })?.name, 'livekit');
  });

  it('selects nothing for an unknown iss, a key id no issuer of that iss names, or a missing key id where only named keys exist', () => {
    assert.equal(selectIssuer(ALL, { iss: 'https://evil.example/', kid: null }), undefined);
    assert.equal(selectIssuer(ALL, { iss: null, kid: 'idpKey' }), undefined);
    assert.equal(selectIssuer(ALL, { iss: null, kid: null }), undefined);
    // a key id of another iss's issuer does not cross over
    assert.equal(selectIssuer([MUX], { iss: 'https://idp.example.com/', kid: 'muxKey1' }), undefined);
  });

  it('prefers the issuer naming the key id over the any-key one of the same iss', () => {
    const named = { name: 'named', issuer: 'x', keyIds: ['k1'] };
    const any = { name: 'any', issuer: 'x', keyIds: [] };
    assert.equal(selectIssuer([any, named], { iss: 'x', kid: 'k1' })?.name, 'named');
    assert.equal(selectIssuer([any, named], { iss: 'x', kid: 'k2' })?.name, 'any');
  });

  it('calls two issuers overlapping exactly when one JWT could select both', () => {
    assert.equal(overlapping(MUX, CF), false, 'same (absent) iss, disjoint key ids');
    assert.equal(overlapping(MUX, { issuer: null, keyIds: ['muxKey2', 'other'] }), true, 'a shared key id');
    assert.equal(overlapping(MUX, { issuer: null, keyIds: [] }), true, 'an any-key issuer of the same iss');
    assert.equal(overlapping(IDP, { issuer: 'https://idp.example.com/', keyIds: ['k'] }), true);
    assert.equal(overlapping(IDP, LIVEKIT), false, 'different iss');
    assert.equal(overlapping({ issuer: null, keyIds: [] }, { issuer: '', keyIds: [] }), false, 'no iss is not the empty iss');
  });
});
