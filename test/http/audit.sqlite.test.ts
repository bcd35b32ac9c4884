import { auditSuite } from './audit.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

auditSuite(sqliteFactory());
