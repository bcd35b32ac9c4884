import { securedStreamsSuite } from './secured-streams.suite.js';
import { redisFactory } from '../helpers/stores.js';

securedStreamsSuite(redisFactory());
