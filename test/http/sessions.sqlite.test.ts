import { sessionsSuite } from './sessions.cases.js';
import { sqliteFactory } from '../helpers/stores.js';

sessionsSuite(sqliteFactory());
