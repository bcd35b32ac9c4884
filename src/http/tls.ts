// The server's own certificate and key (server.tls), read and checked before anything listens, so a
// wrong path or file is a start-up error naming the setting and the file — never the key's content.
import { readFileSync } from 'node:fs';
import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../config/load.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

function read(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ConfigError(`${setting}: cannot read ${file}: ${(e as Error).message}`);
  }
}

/** Reads and checks the pair; null when TLS is off (both settings empty). Throws ConfigError. */
export function loadTls(files: TlsFiles): TlsMaterial | null {
  if (files.certFile === '' && files.keyFile === '') return null;
  const cert = read('server.tls.certFile', files.certFile);
  const key = read('server.tls.keyFile', files.keyFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`server.tls.certFile: ${files.certFile} holds no valid PEM certificate`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    // The library's reason can quote what it failed to parse; only the path is named.
    throw new ConfigError(`server.tls.keyFile: ${files.keyFile} holds no valid unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(`server.tls.keyFile: the key in ${files.keyFile} does not belong to the certificate in ${files.certFile}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    throw new ConfigError(`server.tls: ${files.certFile} and ${files.keyFile} are not usable: ${(e as { code?: string }).code ?? 'unknown reason'}`);
  }
  return { cert, key };
}
