import { storeContract } from './store-contract.js';
import { redisClusterFactory } from '../helpers/stores.js';

storeContract(redisClusterFactory());
