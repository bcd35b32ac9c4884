// The part of Akamai's EdgeAuth SDK (npm akamai-edgeauth, plain JavaScript) the tests call.
declare module 'akamai-edgeauth' {
  interface EdgeAuthOptions {
    key: string;
    algorithm?: 'sha256' | 'sha1' | 'md5';
    startTime?: number | 'now';
    endTime?: number;
    windowSeconds?: number;
    ip?: string;
    sessionId?: string;
    payload?: string;
    salt?: string;
    escapeEarly?: boolean;
    fieldDelimiter?: string;
    aclDelimiter?: string;
    tokenName?: string;
  }
  export default class EdgeAuth {
    constructor(options: EdgeAuthOptions);
    generateACLToken(acl: string | string[]): string;
    generateURLToken(url: string): string;
  }
}
