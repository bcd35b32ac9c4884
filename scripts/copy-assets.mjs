// After tsc: copies the non-TypeScript files the service reads at run time into dist/.
import { cpSync } from 'node:fs';
cpSync('src/store/redis/lua', 'dist/store/redis/lua', { recursive: true });
