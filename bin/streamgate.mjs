#!/usr/bin/env node
// The streamgate command. Runs the TypeScript sources through tsx (a runtime dependency).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
