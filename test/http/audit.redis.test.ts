import { auditSuite } from './audit.suite.js';
import { redisFactory } from '../helpers/stores.js';

auditSuite(redisFactory());
