# expect: parse-error line=4
def plan():
	walk('kitchen')
	os.system('touch pwned.txt')
