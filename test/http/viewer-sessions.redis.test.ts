import { viewerSessionsSuite } from './viewer-sessions.cases.js';
import { redisFactory } from '../helpers/stores.js';

viewerSessionsSuite(redisFactory());
