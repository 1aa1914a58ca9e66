/** Interface D's tunables, each with its reason. */
export const pulseConfig = {
  /** Respondents read per page of a streamed export: memory stays flat whatever the pulse's size. */
  exportPageSize: 500,
} as const
