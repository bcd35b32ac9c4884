import { accountLimitsSuite } from './account-limits.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

accountLimitsSuite(sqliteFactory());
