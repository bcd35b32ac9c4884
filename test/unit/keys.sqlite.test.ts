import { keyRingSuite } from './keys.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

keyRingSuite(sqliteFactory());
