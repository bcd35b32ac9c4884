import { analyticsSuite } from './analytics.suite.js';
import { redisFactory } from '../helpers/stores.js';

analyticsSuite(redisFactory());
