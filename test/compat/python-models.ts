// The official Python REST client's response models, ported field for field, and a decoder that
// treats a JSON answer the way the client does, so a test can tell whether the client would warn or
// fail on a record Streamgate answers.
//
// Source: github.com/DolbyIO/dolbyio-rest-apis-client-python, tag 5.0.0 (commit
// 456d622459a99ebf54007c682ee93604062ec21b; the repository's latest source, the commits after it
// only touch CI), the package `dolbyio_rest_apis` 5.0.0 on PyPI:
// - client/src/dolbyio_rest_apis/streaming/models/publish_token.py: TokenGeoCascade,
//   TokenStreamName, PublishTokenRestream, TokenEffectiveSettings, PublishToken,
//   ActivePublishToken, FailedToken, DisablePublishTokenResponse;
// - client/src/dolbyio_rest_apis/streaming/models/subscribe_token.py: SubscribeTokenTracking,
//   SubscribeToken;
// - client/src/dolbyio_rest_apis/streaming/models/webhooks.py: Webhook.
// Every one is `@dataclass_json(letter_case=LetterCase.CAMEL) @dataclass`, and the client decodes
// each answer's `data` with `<Model>.from_dict(data)` (streaming/publish_token.py,
// subscribe_token.py, webhooks.py), that is with infer_missing=False. The client requires
// dataclasses-json>=0.6.7 (client/requirements.txt).
//
// What dataclasses_json 0.6.x does there (dataclasses_json/core.py, _decode_dataclass and
// _decode_generic), and the decoder below with it:
// - JSON keys are matched to fields through the camelCase of the field name; other keys are ignored;
// - a field missing from the JSON takes its default (or default_factory); a missing field without
//   one is a KeyError: the whole decode fails;
// - a field whose value is None (JSON null) keeps None; when its type is not Optional (`T | None`)
//   it warns `RuntimeWarning: 'NoneType' object value of non-optional type <field> detected when
//   decoding <Model>.` (the warning users see on every decode of a record with a null);
// - a dataclass field, an Optional dataclass field and a list of dataclasses decode their value(s)
//   the same way, recursively;
// - other values are kept as they are (or converted to int/str/bool when the JSON type differs);
//   the conversion never warns and is not modelled here.

/** A field's Python type, as far as decoding needs it. */
export type PyType = { py: 'int' | 'str' | 'bool' } | { py: 'list'; of: PyType } | { py: 'model'; model: PyModel };

export interface PyField {
  /** The Python field name (snake_case). */
  name: string;
  type: PyType;
  /** Declared `T | None`. */
  optional: boolean;
  /** How a missing field is filled: a default value, a default_factory, or nothing (a KeyError). */
  missing: { default: unknown } | { factory: () => unknown } | 'required';
}

export interface PyModel {
  name: string;
  fields: PyField[];
}

const int: PyType = { py: 'int' };
const str: PyType = { py: 'str' };
const bool: PyType = { py: 'bool' };
const listOf = (of: PyType): PyType => ({ py: 'list', of });
const model = (m: PyModel): PyType => ({ py: 'model', model: m });
const emptyList = { factory: () => [] };

/** `name: T | None = None` */
const opt = (name: string, type: PyType): PyField => ({ name, type, optional: true, missing: { default: null } });
/** `name: T = value` */
const withDefault = (name: string, type: PyType, value: unknown): PyField => ({ name, type, optional: false, missing: { default: value } });
/** `name: list[T] = field(default_factory=lambda: [])` */
const list = (name: string, of: PyType): PyField => ({ name, type: listOf(of), optional: false, missing: emptyList });
/** `name: T` (no default) */
const required = (name: string, type: PyType): PyField => ({ name, type, optional: false, missing: 'required' });

// ---- streaming/models/publish_token.py ----

export const TokenGeoCascade: PyModel = {
  name: 'TokenGeoCascade',
  fields: [withDefault('is_enabled', bool, false), list('clusters', str)],
};

export const TokenStreamName: PyModel = {
  name: 'TokenStreamName',
  fields: [required('stream_name', str), withDefault('is_regex', bool, false)],
};

export const PublishTokenRestream: PyModel = {
  name: 'PublishTokenRestream',
  fields: [required('url', str), required('key', str)],
};

export const TokenEffectiveSettings: PyModel = {
  name: 'TokenEffectiveSettings',
  fields: [opt('origin_cluster', str), list('allowed_countries', str), list('denied_countries', str), opt('geo_cascade', model(TokenGeoCascade))],
};

/** The fields PublishToken and SubscribeToken share, in their declaration order. */
const tokenHead = (): PyField[] => [
  opt('id', int),
  opt('label', str),
  opt('token', str),
  opt('added_on', str),
  opt('expires_on', str),
  opt('is_active', bool),
  list('streams', model(TokenStreamName)),
  list('allowed_origins', str),
  list('allowed_ip_addresses', str),
  opt('bind_ips_on_usage', int),
  list('allowed_countries', str),
  list('denied_countries', str),
  opt('origin_cluster', str),
];

export const PublishToken: PyModel = {
  name: 'PublishToken',
  fields: [
    ...tokenHead(),
    withDefault('subscribe_requires_auth', bool, false),
    withDefault('record', bool, false),
    withDefault('clip', bool, false),
    withDefault('multisource', bool, false),
    withDefault('low_latency_rtmp', bool, false),
    withDefault('enable_thumbnails', bool, false),
    withDefault('display_srt_passphrase', bool, false),
    withDefault('srt_passphrase', bool, false),
    opt('geo_cascade', model(TokenGeoCascade)),
    list('restream', model(PublishTokenRestream)),
    opt('effective_settings', model(TokenEffectiveSettings)),
  ],
};

export const ActivePublishToken: PyModel = {
  name: 'ActivePublishToken',
  fields: [required('token_ids', listOf(int))],
};

export const FailedToken: PyModel = {
  name: 'FailedToken',
  fields: [opt('token_id', str), opt('error_message', str)],
};

export const DisablePublishTokenResponse: PyModel = {
  name: 'DisablePublishTokenResponse',
  fields: [required('successful_tokens', listOf(int)), required('failed_tokens', listOf(model(FailedToken)))],
};

// ---- streaming/models/subscribe_token.py ----

export const SubscribeTokenTracking: PyModel = {
  name: 'SubscribeTokenTracking',
  // `tracking_id: bool = False` in the client (the hosted value is a string; dataclasses_json
  // converts it with bool(), silently)
  fields: [withDefault('tracking_id', bool, false)],
};

export const SubscribeToken: PyModel = {
  name: 'SubscribeToken',
  fields: [...tokenHead(), opt('effective_settings', model(TokenEffectiveSettings)), opt('tracking', model(SubscribeTokenTracking))],
};

// ---- streaming/models/webhooks.py ----

export const Webhook: PyModel = {
  name: 'Webhook',
  fields: [
    opt('id', int),
    opt('url', str),
    opt('secret', str),
    opt('is_feed_hooks', bool),
    opt('is_recording_hooks', bool),
    opt('is_thumbnail_hooks', bool),
    opt('is_transcoder_hooks', bool),
    opt('is_clip_hooks', bool),
  ],
};

// ---- the decoder ----

/** LetterCase.CAMEL's spelling of a field name (stringcase.camelcase): `bind_ips_on_usage` → `bindIpsOnUsage`. */
export const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** A decode that failed as it would in the client (KeyError on a missing field without a default, or a wrong container). */
export class DecodeError extends Error {}

export interface Decoded {
  /** The decoded object, keyed by Python field names. */
  value: Record<string, unknown>;
  /** The RuntimeWarnings the decode raised, in order. */
  warnings: string[];
}

/** `<Model>.from_dict(json)`: the value and the warnings it raised; throws DecodeError where the client raises. */
export function fromDict(m: PyModel, json: unknown): Decoded {
  const warnings: string[] = [];
  const value = decodeModel(m, json, warnings);
  return { value, warnings };
}

function decodeModel(m: PyModel, json: unknown, warnings: string[]): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new DecodeError(`AttributeError: ${m.name} decodes a mapping, got ${JSON.stringify(json)}`);
  }
  const given = json as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of m.fields) {
    const key = camel(f.name);
    const has = Object.hasOwn(given, key) || Object.hasOwn(given, f.name);
    let v: unknown;
    if (has) v = Object.hasOwn(given, key) ? given[key] : given[f.name];
    else if (f.missing === 'required') throw new DecodeError(`KeyError: '${f.name}' (missing from ${m.name})`);
    else v = 'factory' in f.missing ? f.missing.factory() : f.missing.default;
    if (v === null) {
      if (!f.optional) warnings.push(`'NoneType' object value of non-optional type ${f.name} detected when decoding ${m.name}.`);
      out[f.name] = null;
      continue;
    }
    out[f.name] = decodeValue(f.type, v, warnings, `${m.name}.${f.name}`);
  }
  return out;
}

function decodeValue(t: PyType, v: unknown, warnings: string[], where: string): unknown {
  if (t.py === 'model') return decodeModel(t.model, v, warnings);
  if (t.py === 'list') {
    if (!Array.isArray(v)) throw new DecodeError(`TypeError: ${where} decodes a list, got ${JSON.stringify(v)}`);
    return v.map((x, i) => decodeValue(t.of, x, warnings, `${where}[${i}]`));
  }
  return v;
}
