// The path rules as tables: which original request paths are decided on (and decoded to what),
// which are refused, and which names MediaMTX could read as something other than one exact path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mediamtxPathProblem, safeRequestPath } from '../../src/domain/paths.js';
import { fcOptions } from '../helpers/property.js';
import { CONFUSING_PATHS } from '../helpers/confusing-paths.js';


describe('safeRequestPath: what an original request path is decided on', () => {
  it('decodes legitimate names as themselves', () => {
    const ok: Array<[string, string]> = [
      ['/hls/cam1/index.m3u8', '/hls/cam1/index.m3u8'],
      ['/hls/cam.1/index.m3u8', '/hls/cam.1/index.m3u8'],
      ['/hls/a-b_c~d/seg-1.ts', '/hls/a-b_c~d/seg-1.ts'],
      ['/hls/my%20cam/index.m3u8', '/hls/my cam/index.m3u8'],
      ['/hls/caf%C3%A9/index.m3u8', '/hls/café/index.m3u8'],
      ['/hls/%E3%82%AB%E3%83%A1%E3%83%A9/index.m3u8', '/hls/カメラ/index.m3u8'],
      ['/hls/cam%2D1/index.m3u8', '/hls/cam-1/index.m3u8'],
      ['/hls/.hidden-cam/index.m3u8', '/hls/.hidden-cam/index.m3u8'],
      ['/hls/cam..1/index.m3u8', '/hls/cam..1/index.m3u8'],
      ['/hls/cam1/', '/hls/cam1/'],
      ['/hls/cam1.m3u8', '/hls/cam1.m3u8'],
      ["/hls/a!$&'()*+,=:@/index.m3u8", "/hls/a!$&'()*+,=:@/index.m3u8"],
      ['/', '/'],
    ];
    for (const [raw, decoded] of ok) assert.deepEqual(safeRequestPath(raw), { path: decoded }, raw);
  });

  it('refuses every dot segment, empty segment, encoded separator, double encoding and control character', () => {
    for (const raw of CONFUSING_PATHS) {
      const r = safeRequestPath(raw);
      assert.ok('problem' in r, `${JSON.stringify(raw)} was accepted as ${JSON.stringify(r)}`);
    }
  });

  it('says why, in words that never echo the path', () => {
    assert.deepEqual(safeRequestPath('/hls/open/../premium/x.ts'), { problem: 'a dot segment' });
    assert.deepEqual(safeRequestPath('/hls/open%2F..%2Fpremium/x.ts'), { problem: 'an encoded %, / or \\' });
    assert.deepEqual(safeRequestPath('/hls//premium/x.ts'), { problem: 'an empty segment (//)' });
    assert.deepEqual(safeRequestPath('/hls/a;b/x.ts'), { problem: 'a character that must be percent-encoded, or ;' });
    assert.deepEqual(safeRequestPath('http://h/hls/x.ts'), { problem: 'not an origin-form path (does not start with /)' });
    assert.deepEqual(safeRequestPath('/hls/%C0%AE/x.ts'), { problem: 'percent-encoding that is not UTF-8' });
    assert.deepEqual(safeRequestPath('/hls/%EF%BD%90remium/x.ts'), { problem: 'a segment that Unicode compatibility folding (NFKC) changes' });
    assert.deepEqual(safeRequestPath('/hls/open/%EF%BC%8E%EF%BC%8E/x.ts'), { problem: 'a segment that Unicode compatibility folding (NFKC) changes' });
  });

  it('property: a path of safe segments is decided as itself; any dot or separator spelling inserted anywhere is refused', () => {
    const safeChar = fc.constantFrom(...'abcXYZ019-_~.!$&()*+,=:@'.split(''));
    const segment = fc
      .array(safeChar, { minLength: 1, maxLength: 8 })
      .map((cs) => cs.join(''))
      .filter((s) => !/^[.]+$/.test(s) && !s.endsWith('.'));
    const attack = fc.constantFrom('..', '.', '%2e%2e', '%2E.', '.%2e', '%2e', '..;', '', '%2f', '%5c', '%252e', '%00', '%EF%BC%8E%EF%BC%8E', '..\\', '%0d');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.nat(), attack, (segs, at, bad) => {
        const path = `/${segs.join('/')}`;
        assert.deepEqual(safeRequestPath(path), { path });
        const withAttack = [...segs];
        withAttack.splice(at % (segs.length + 1), 0, bad);
        // an empty segment at the very end is a trailing slash, which names nothing new
        const raw = `/${withAttack.join('/')}${bad === '' ? '/x' : ''}`;
        assert.ok('problem' in safeRequestPath(raw), raw);
      }),
      fcOptions(500, 20000),
    );
  });
});

describe('mediamtxPathProblem: names MediaMTX reads as exactly one path', () => {
  it('accepts exact paths', () => {
    for (const p of ['cam1', 'live/cam1', 'ZG6NWV/cam1', 'live/ZG6NWV/cam.1', 'a-b_c.d', 'cam..1', '.hidden']) assert.equal(mediamtxPathProblem(p), null, p);
  });

  it("refuses '~' (a regular expression), the empty path (every path) and what MediaMTX refuses to serve", () => {
    const cases: Array<[string, string]> = [
      ['~.*', "a name starting with '~' is read by MediaMTX as a regular expression"],
      ['~^premium$', "a name starting with '~' is read by MediaMTX as a regular expression"],
      ['', 'an empty MediaMTX path means every path'],
      ['live/~.*', 'MediaMTX paths hold only letters, digits, _ . - and /'],
      ['cam 1', 'MediaMTX paths hold only letters, digits, _ . - and /'],
      ['cam:1', 'MediaMTX paths hold only letters, digits, _ . - and /'],
      ['caméra', 'MediaMTX paths hold only letters, digits, _ . - and /'],
      ['cam1\n', 'MediaMTX paths hold only letters, digits, _ . - and /'],
      ['/cam1', 'a MediaMTX path neither starts nor ends with /'],
      ['cam1/', 'a MediaMTX path neither starts nor ends with /'],
      ['live//cam1', 'a MediaMTX path has no empty segment (//)'],
      ['live/../premium', 'a MediaMTX path has no . or .. segment'],
      ['./cam1', 'a MediaMTX path has no . or .. segment'],
    ];
    for (const [p, why] of cases) assert.equal(mediamtxPathProblem(p), why, JSON.stringify(p));
  });
});
