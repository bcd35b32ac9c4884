import { storeContract } from './store-contract.js';
import { redisFactory } from '../helpers/stores.js';

storeContract(redisFactory());
