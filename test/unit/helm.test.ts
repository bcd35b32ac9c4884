// The Helm chart cannot drift from the service: values validate against the chart's schema,
// every .Values path the templates use exists, and the config block passes Streamgate's validator.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import YAML from 'yaml';
import { Ajv } from 'ajv';
import { ROOT } from '../helpers/process.js';
import { DEFAULT_CONFIG_FILE, loadConfig, merge, validateConfig } from '../../src/config/load.js';

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

  // Helm itself is not installable on the CI machine (no Debian package, no registry binary), so the
  // generated-secret path is checked on the template's text and against Streamgate's validator.
  it('the Secret template renders the given hook secret, else the live one, else randAlphaNum 48 (read from the template text)', () => {
    const tpl = readFileSync(`${CHART}/templates/secret.yaml`, 'utf8');
    assert.match(tpl, /\$hookSecret := \.Values\.secrets\.hookSecret/);
    assert.match(tpl, /lookup "v1" "Secret" \.Release\.Namespace \(include "streamgate\.fullname" \.\)/);
    assert.match(tpl, /\$hookSecret = index \$live\.data "hook-secret" \| b64dec/);
    const generated = /\$hookSecret = randAlphaNum (\d+)/.exec(tpl);
    assert.ok(generated && Number(generated[1]) >= 32, 'randAlphaNum of 32+ characters');
    assert.match(tpl, /hook-secret: \{\{ \$hookSecret \| quote \}\}/);
    assert.doesNotMatch(tpl, /hook-secret: \{\{ \.Values/, 'the empty value is never rendered');
  });

  it('the audit log key: given, else the live one, else randAlphaNum 48; every replica reads it as STREAMGATE_AUDIT_KEY, optional for an older existing Secret', () => {
    const tpl = readFileSync(`${CHART}/templates/secret.yaml`, 'utf8');
    assert.match(tpl, /\$auditKey := \.Values\.secrets\.auditKey/);
    assert.match(tpl, /\$auditKey = index \$live\.data "audit-key" \| b64dec/);
    const generated = /\$auditKey = randAlphaNum (\d+)/.exec(tpl);
    assert.ok(generated && Number(generated[1]) >= 32, 'randAlphaNum of 32+ characters');
    assert.match(tpl, /audit-key: \{\{ \$auditKey \| quote \}\}/);
    const deployment = readFileSync(`${CHART}/templates/deployment.yaml`, 'utf8');
    assert.match(deployment, /- name: STREAMGATE_AUDIT_KEY\s+valueFrom:\s+secretKeyRef: \{ name: \{\{ include "streamgate\.secretName" \. \}\}, key: audit-key, optional: true \}/);
    assert.equal(loadConfig({ env: { STREAMGATE_AUDIT_KEY: 'k'.repeat(48) } }).audit.key, 'k'.repeat(48), 'the variable names the setting');
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const secrets = values.secrets as Record<string, string>;
    assert.equal(validate({ ...values, secrets: { ...secrets, auditKey: 'short' } }), false);
    assert.equal(validate({ ...values, secrets: { ...secrets, auditKey: 'a'.repeat(32) } }), true);
  });

  it('an issuer keys Secret is mounted read-only as issuers.keyDir through a variable Streamgate takes; item paths are <account id>/<file name>', () => {
    const tpl = readFileSync(`${CHART}/templates/deployment.yaml`, 'utf8');
    const dir = /- name: STREAMGATE_ISSUERS_KEYDIR\s+value: (\S+)/.exec(tpl)?.[1];
    assert.ok(dir !== undefined, 'the key directory variable');
    assert.match(tpl, new RegExp(`\\{ name: issuer-keys, mountPath: ${dir}, readOnly: true \\}`));
    assert.match(tpl, /secretName: \{\{ \.Values\.issuerKeys\.existingSecret \}\}\s+defaultMode: 0440/);
    assert.equal(loadConfig({ env: { STREAMGATE_ISSUERS_KEYDIR: dir } }).issuers.keyDir, dir, 'the variable names the setting');
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const withKeys = (items: unknown) => ({ ...values, issuerKeys: { existingSecret: 'keys', items, envFromSecret: '' } });
    assert.equal(validate(withKeys([{ key: 'edge', path: '9CZC2T/edge.hex' }])), true, JSON.stringify(validate.errors));
    for (const path of ['edge.hex', '../9CZC2T/edge.hex', '9CZC2T/.hidden', '9CZC2T/a/b']) assert.equal(validate(withKeys([{ key: 'edge', path }])), false, path);
    // a Secret without items would mount its keys flat, where no account's key file is
    assert.equal(validate(withKeys([])), false, 'existingSecret without items');
    assert.equal(validate({ ...values, issuerKeys: { existingSecret: '', items: [{ key: 'edge', path: '9CZC2T/edge.hex' }], envFromSecret: '' } }), false, 'items without existingSecret');
  });

  it('the image listens on every interface, which needs the hook secret the chart always provides', () => {
    const docker = readFileSync(`${ROOT}Dockerfile`, 'utf8');
    assert.match(docker, /^ENV .*\bHOST=0\.0\.0\.0\b/m);
    const defaults = YAML.parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')) as Record<string, unknown>;
    const chart = merge(defaults, values.config as Record<string, unknown>);
    const asDeployed = (hookSecret: string) => merge(chart, { server: { host: '0.0.0.0' }, hooks: { secret: hookSecret } });
    assert.throws(() => validateConfig(asDeployed('')), /hooks\.secret: required when listening on 0\.0\.0\.0/);
    assert.equal(validateConfig(asDeployed('x'.repeat(48))).hooks.secret.length, 48);
  });

  it('the schema refuses an admin key or hook secret shorter than 32 characters', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const secrets = values.secrets as Record<string, string>;
    assert.equal(validate({ ...values, secrets: { ...secrets, hookSecret: 'short' } }), false);
    assert.equal(validate({ ...values, secrets: { ...secrets, adminKey: 'a'.repeat(31) } }), false);
    assert.equal(validate({ ...values, secrets: { ...secrets, adminKey: 'a'.repeat(32), hookSecret: 'h'.repeat(32) } }), true);
  });
});
