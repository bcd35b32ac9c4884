import { storeContract } from 'streamgate/store-contract';
import { redisFactory } from '../helpers/stores.js';

storeContract(redisFactory());
