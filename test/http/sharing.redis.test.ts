import { sharingSuite } from './sharing.suite.js';
import { redisFactory } from '../helpers/stores.js';

sharingSuite(redisFactory());
