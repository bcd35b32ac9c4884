import { geoSuite } from './geo.suite.js';
import { redisFactory } from '../helpers/stores.js';

geoSuite(redisFactory());
