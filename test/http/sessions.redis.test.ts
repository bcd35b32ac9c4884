import { sessionsSuite } from './sessions.cases.js';
import { redisFactory } from '../helpers/stores.js';

sessionsSuite(redisFactory());
