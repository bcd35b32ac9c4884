import { enforcementSuite } from './enforcement.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

enforcementSuite(sqliteFactory());
