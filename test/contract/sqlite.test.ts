import { storeContract } from './store-contract.js';
import { sqliteFactory } from '../helpers/stores.js';

storeContract(sqliteFactory());
