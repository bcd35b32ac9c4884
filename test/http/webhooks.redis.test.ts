import { webhooksSuite } from './webhooks.suite.js';
import { redisFactory } from '../helpers/stores.js';

webhooksSuite(redisFactory());
