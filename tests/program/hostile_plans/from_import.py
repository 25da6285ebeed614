# expect: parse-error line=3
def plan():
	from os import system
	system('touch pwned.txt')
