import { accountLimitsSuite } from './account-limits.suite.js';
import { redisFactory } from '../helpers/stores.js';

accountLimitsSuite(redisFactory());
