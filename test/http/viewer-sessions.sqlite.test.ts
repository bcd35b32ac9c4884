import { viewerSessionsSuite } from './viewer-sessions.cases.js';
import { sqliteFactory } from '../helpers/stores.js';

viewerSessionsSuite(sqliteFactory());
