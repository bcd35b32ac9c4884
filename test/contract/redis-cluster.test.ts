import { storeContract } from 'streamgate/store-contract';
import { redisClusterFactory } from '../helpers/stores.js';

storeContract(redisClusterFactory());
