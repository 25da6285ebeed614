# expect: parse-error line=5
def plan():
	walk('kitchen')
	find('lime')
    grab('lime')
