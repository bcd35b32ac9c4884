// The library entry point: what embedders and scripts may import from 'streamgate'.
export { signSubscribeJwt, type SignSubscribeOptions } from './policy/self-signed.js';
export { evaluate, type Credential, type EvalContext, type Evaluation } from './policy/evaluate.js';
export { REASONS, type AccessRequest, type Decision, type Reason } from './policy/types.js';
export { createApp } from './app.js';
export { createServices, type Services } from './services.js';
export { loadConfig } from './config/load.js';
export type { Store } from './store/store.js';
