import { tokenApiSuite } from './token-api.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

tokenApiSuite(sqliteFactory());
