import type { Config } from '../config'

/** What a payment network fixes: its names in both protocol versions, the chain and USDC's EIP-712 domain. */
export type PayNetwork = {
  /** x402 v1 name (a member of x402@1.2.0's closed enum). */
  v1: Config['payNetwork']
  /** x402 v2 CAIP-2 id. */
  v2: `eip155:${number}`
  chainId: number
  /** USDC's contract, checksummed. */
  asset: `0x${string}`
  /** USDC's EIP-712 domain name and version; a wrong name makes every signature invalid. */
  name: string
  version: string
}

// The table of docs/payments.md, "Turning it on": from x402's evm config and @x402/evm's default assets.
const NETWORKS: Record<Config['payNetwork'], PayNetwork> = {
  'base-sepolia': { v1: 'base-sepolia', v2: 'eip155:84532', chainId: 84532, asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
  base: { v1: 'base', v2: 'eip155:8453', chainId: 8453, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
}

/** The network table entry of a configured network. */
export const payNetwork = (name: Config['payNetwork']): PayNetwork => NETWORKS[name]
