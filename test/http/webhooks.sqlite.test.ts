import { webhooksSuite } from './webhooks.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

webhooksSuite(sqliteFactory());
