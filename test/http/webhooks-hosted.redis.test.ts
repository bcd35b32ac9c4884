import { webhooksHostedSuite } from './webhooks-hosted.suite.js';
import { redisFactory } from '../helpers/stores.js';

webhooksHostedSuite(redisFactory());
