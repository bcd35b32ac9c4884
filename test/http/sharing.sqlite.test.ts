import { sharingSuite } from './sharing.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

sharingSuite(sqliteFactory());
