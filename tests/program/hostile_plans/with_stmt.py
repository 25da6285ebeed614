# expect: parse-error line=3
def plan():
	with open('pwned.txt', 'w') as f:
		pass
