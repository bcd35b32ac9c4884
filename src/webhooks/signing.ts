// Webhook signatures: the hosted platform's x-service-signature (sha1=hex HMAC-SHA1 of the exact
// body bytes, keyed with the base64-decoded secret) and Standard Webhooks' v1 HMAC-SHA256 headers.
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

export function signedHeaders(id: string, timestampS: number, body: Buffer, secret: string): Record<string, string> {
  return {
    'x-service-signature': serviceSignature(body, secret),
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': standardSignature(id, timestampS, body, secret),
  };
}
