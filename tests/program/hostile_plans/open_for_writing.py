# expect: invalid line=3
def plan():
	open('pwned.txt', 'w')
