// The Helm chart cannot drift from the service: values validate against the chart's schema,
// every .Values path the templates use exists, and the config block passes Streamgate's validator.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import YAML from 'yaml';
import { Ajv } from 'ajv';
import { ROOT } from '../helpers/process.js';
import { DEFAULT_CONFIG_FILE, merge, validateConfig } from '../../src/config/load.js';

const CHART = `${ROOT}helm/streamgate`;
const values = YAML.parse(readFileSync(`${CHART}/values.yaml`, 'utf8')) as Record<string, unknown>;
const schema = JSON.parse(readFileSync(`${CHART}/values.schema.json`, 'utf8')) as object;

function has(obj: unknown, path: string[]): boolean {
  let node = obj;
  for (const k of path) {
    if (typeof node !== 'object' || node === null || !(k in node)) return false;
    node = (node as Record<string, unknown>)[k];
  }
  return true;
}

describe('Helm chart', () => {
  it('values.yaml validates against values.schema.json', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.equal(validate(values), true, JSON.stringify(validate.errors));
  });

  it('the schema refuses a wrong type and an unknown key', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.equal(validate({ ...values, replicaCount: 'two' }), false);
    assert.equal(validate({ ...values, replicas: 2 }), false);
    assert.equal(validate({ ...values, redis: { url: 'http://x' } }), false);
  });

  it('every .Values path used in the templates exists in values.yaml', () => {
    const used = new Set<string>();
    for (const f of readdirSync(`${CHART}/templates`)) {
      const text = readFileSync(`${CHART}/templates/${f}`, 'utf8');
      for (const m of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) used.add(m[1].slice(1));
    }
    assert.ok(used.size > 20, `found ${used.size} paths`);
    const missing = [...used].filter((p) => !has(values, p.split('.')));
    assert.deepEqual(missing, []);
  });

  it("the config block passes Streamgate's own config validator", () => {
    const defaults = YAML.parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')) as Record<string, unknown>;
    const config = validateConfig(merge(defaults, values.config as Record<string, unknown>));
    assert.equal(config.server.shutdownDelayMs, 5000);
    assert.throws(() => validateConfig(merge(defaults, { enforcement: { onStoreError: 'maybe' } })), /enforcement\.onStoreError/);
  });
});
