// The director's signing-key ring (test/unit/keys.suite.ts) on Redis: the one unit suite that needs a
// server, so it lives here and `npm run test:unit` stays free of Redis.
import { keyRingSuite } from '../unit/keys.suite.js';
import { redisFactory } from '../helpers/stores.js';

keyRingSuite(redisFactory());
