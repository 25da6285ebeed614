# expect: parse-error line=3
def plan():
	__import__('os').system('touch pwned.txt')
