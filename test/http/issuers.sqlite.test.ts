import { issuersSuite } from './issuers.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

issuersSuite(sqliteFactory());
