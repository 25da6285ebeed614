# expect: parse-error line=3
def plan():
	exec("open('pwned.txt', 'w')")
