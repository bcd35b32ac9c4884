import { issuersSuite } from './issuers.suite.js';
import { redisFactory } from '../helpers/stores.js';

issuersSuite(redisFactory());
