// Deployment metadata: values of the whole deployment (signing keys, credential keys, ...).

export interface MetaStore {
  getMeta(key: string): Promise<string | null>;
  /** Sets a value; with onlyIfAbsent, only when the key has none (atomic). True when written. */
  setMeta(key: string, value: string, onlyIfAbsent?: boolean): Promise<boolean>;
}
