// Webhook signatures: the hosted platform's signature (sha1=hex HMAC-SHA1 of the exact body bytes,
// keyed with the base64-decoded secret) under its own name X-Millicast-Signature and/or the
// neutral x-service-signature, and Standard Webhooks' v1 HMAC-SHA256 headers.
import { createHmac, randomBytes } from 'node:crypto';

/** base64 of 32 random bytes, shown to the account holder once per create/refresh. */
export const newWebhookSecret = (): string => randomBytes(32).toString('base64');

const key = (secret: string): Buffer => Buffer.from(secret, 'base64');

export function serviceSignature(body: Buffer, secret: string): string {
  return `sha1=${createHmac('sha1', key(secret)).update(body).digest('hex')}`;
}

/** webhook-signature over "<id>.<timestamp>.<body>" (https://www.standardwebhooks.com). */
export function standardSignature(id: string, timestampS: number, body: Buffer, secret: string): string {
  const mac = createHmac('sha256', key(secret)).update(`${id}.${timestampS}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** Which spellings of the hosted headers a delivery carries (webhooks.headerNames). */
export type HeaderNames = ReadonlyArray<'service' | 'millicast'>;

/**
 * The hosted platform's headers (`x-service-<name>`, as rendered) under the spellings asked for:
 * receivers written from the hosted docs read `x-millicast-<name>`.
 */
export function withHeaderNames(headers: Record<string, string>, names: HeaderNames): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (!k.startsWith('x-service-')) {
      out[k] = v;
      continue;
    }
    if (names.includes('service')) out[k] = v;
    if (names.includes('millicast')) out[`x-millicast-${k.slice('x-service-'.length)}`] = v;
  }
  return out;
}

export function signedHeaders(id: string, timestampS: number, body: Buffer, secret: string): Record<string, string> {
  return {
    'x-service-signature': serviceSignature(body, secret),
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': standardSignature(id, timestampS, body, secret),
  };
}
