import { tokenApiSuite } from './token-api.suite.js';
import { redisFactory } from '../helpers/stores.js';

tokenApiSuite(redisFactory());
