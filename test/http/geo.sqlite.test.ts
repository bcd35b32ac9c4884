import { geoSuite } from './geo.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

geoSuite(sqliteFactory());
