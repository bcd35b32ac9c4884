import { webhooksHostedSuite } from './webhooks-hosted.suite.js';
import { sqliteFactory } from '../helpers/stores.js';

webhooksHostedSuite(sqliteFactory());
