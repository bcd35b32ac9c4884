import { keyRingSuite } from './keys.suite.js';
import { redisFactory } from '../helpers/stores.js';

keyRingSuite(redisFactory());
