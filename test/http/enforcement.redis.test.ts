import { enforcementSuite } from './enforcement.suite.js';
import { redisFactory } from '../helpers/stores.js';

enforcementSuite(redisFactory());
