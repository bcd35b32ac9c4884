import { securedStreamsSuite } from './secured-streams.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

securedStreamsSuite(sqliteFactory());
