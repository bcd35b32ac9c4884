import { analyticsSuite } from './analytics.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

analyticsSuite(sqliteFactory());
