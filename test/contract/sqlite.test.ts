import { storeContract } from 'streamgate/store-contract';
import { sqliteFactory } from '../helpers/stores.js';

storeContract(sqliteFactory());
